def forward(self, x: Tensor) -> Tensor:
    return torch.relu(x) * 2.0 + self.shift(x)

def shift(self, x: Tensor) -> Tensor:
    if bool(x.sum() > 0):
        return x - 1.0
    return x + 1.0
