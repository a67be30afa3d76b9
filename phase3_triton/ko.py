"""Korean lines of what phase 3's runner prints: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    "Phase 3 - Triton": "Phase 3 - Triton",
}
