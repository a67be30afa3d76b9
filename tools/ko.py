"""Korean lines of what the tools print to a learner (tools/regenerate.py, headline.py, mutants.py, sanitize.py):
{English: Korean}, read by common/i18n.py."""

KO = {
    "labs": "랩",
    "headlines": "기준 비교",
    "headline cases": "기준 케이스",
    "before": "이전",
    "ours_ms": "우리 ms",
    "peer_ms": "peer ms",
    "mutant": "mutant",
    "tier": "tier",
    "caught by": "잡아낸 테스트",
    "compute-sanitizer: errors per variant (runs completed)": "compute-sanitizer: variant별 오류 (완료한 실행)",
    "the course: summary (0 = every check passed)": "과정 전체: 요약 (0 = 모든 검사 통과)",
    "next: `make test` runs the tests; read {guide} for what each lab teaches, and `python -m course list` for the exercises":
        "다음: `make test`로 테스트를 돌립니다. 랩마다 무엇을 가르치는지는 {guide}를, 연습 문제는 `python -m course list`를 보세요",
    "a lab failed: scroll up to its FAILED line; `python -m {phase} --only LAB` runs that lab alone":
        "실패한 랩이 있습니다. 위로 올라가 FAILED 줄을 찾으세요. `python -m {phase} --only LAB`로 그 랩만 실행합니다",
}
