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
}
