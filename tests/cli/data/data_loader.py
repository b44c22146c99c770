"""Data loaders for the --data-loader-script cases (tests/cli/cases/*data_loader*).
Each yields argument sets for testdata/traced_cnn.pt (x: 1x3xHxW)."""
import torch


def load_data():
    # The default name; only the first item is used.
    for i in range(3):
        yield (torch.full((1, 3, 16, 16), 0.5 + i),)


def by_name():
    # A feed dict, as Polygraphy's data loaders yield: arrays by argument name.
    yield {"x": torch.ones(1, 3, 8, 8).numpy()}


def nothing():
    return iter(())


def broken():
    raise RuntimeError("the dataset is not mounted")
    yield
