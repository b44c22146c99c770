validate --no-load tests/fuzz/regression/hostile/16_forged_stamp_journal/forged_journal.pt
