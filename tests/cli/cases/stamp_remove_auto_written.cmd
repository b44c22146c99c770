stamp --dry-run --remove producer_info.json testdata/with_extra.pt
