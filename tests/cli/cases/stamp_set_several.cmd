stamp testdata/traced_cnn.pt -n --no-auto --set a=1 b.c=x t=[1,2]
