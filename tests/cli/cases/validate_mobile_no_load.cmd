validate --no-load testdata/mobile.ptl
