def forward(self, x: Tensor) -> Tensor:
    y = ops.tsctl_test.affine(x, 2.0, 1.0)
    return torch.relu(torch.ops.tsctl_test.affine(y, 0.5, -1.0))
