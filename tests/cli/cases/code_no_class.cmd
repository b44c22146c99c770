code --class Nope testdata/scripted_multi.pt
