module accord.dev/contract

go 1.26
