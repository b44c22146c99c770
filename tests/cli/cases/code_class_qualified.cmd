code --class __torch__.torch.nn.modules.linear.___torch_mangle_8.Linear testdata/scripted_multi.pt
