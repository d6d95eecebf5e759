module gatehouse.example/receiver

go 1.19
