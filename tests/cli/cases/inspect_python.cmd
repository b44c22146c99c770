inspect testdata/bad/python_source.ptl
