validate testdata/infer/xnnpack_conv6.ptl testdata/infer/quantized_conv6.pt
