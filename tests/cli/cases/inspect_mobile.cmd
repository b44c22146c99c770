inspect testdata/mobile.ptl
