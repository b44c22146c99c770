validate testdata/verdict/guess_log.pt
