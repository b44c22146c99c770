report testdata
