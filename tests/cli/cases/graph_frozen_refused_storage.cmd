graph --frozen testdata/bad/oob_storage_offset.pt
