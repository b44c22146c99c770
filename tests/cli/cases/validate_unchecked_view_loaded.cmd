validate --allow-load-hooks --no-infer testdata/hooks/unchecked_view.pt
