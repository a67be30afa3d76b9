"""The course's own command: exercises that check themselves.

    python -m course list                      # every exercise, by phase, and where it runs (CPU or GPU)
    python -m course exercise 2.6.3            # check your answer to exercise 2.6.3
    python -m course exercise 2.6.3 --begin    # copy the starting point to my_work/2.6.3/ to edit
    python -m course exercise 2.6.3 --hint     # the next hint (three at most, each nearer the fix)
    python -m course exercise 2.6.3 --solution # show the solution (try first)
    python -m course list --lang ko            # in Korean (or COURSE_LANG=ko, or a Korean locale)
"""
