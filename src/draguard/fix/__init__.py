"""draguard fix: findings' fixes applied to the original text, byte-minimal, verified by
parsing the result again (`splice`), round after round until none is left (`run`), written
back safely (`files`)."""
