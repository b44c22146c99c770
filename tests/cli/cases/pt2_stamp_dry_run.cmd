stamp -n --no-auto --set team=ml testdata/pt2/cnn.pt2
