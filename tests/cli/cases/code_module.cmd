code --module __torch__.torch.nn.modules.linear.___torch_mangle_7 testdata/scripted_multi.pt
