stamp --dry-run --no-auto --set a=1 tests/fuzz/regression/hostile/16_forged_stamp_journal/forged_journal.pt
