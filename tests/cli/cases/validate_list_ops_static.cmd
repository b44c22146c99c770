validate --no-load --list-ops testdata/mobile.ptl testdata/scripted_multi.pt
