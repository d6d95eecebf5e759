module gatehouse.example/verify

go 1.19
