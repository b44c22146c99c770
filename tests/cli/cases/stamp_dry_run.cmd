stamp --dry-run --no-auto --set owner=alice --set model.epochs=3 testdata/with_extra.pt
