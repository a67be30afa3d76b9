"""Korean lines of what phase 4's runner prints: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    "Phase 4 - Kernel optimization": "Phase 4 - 커널 최적화",
}
