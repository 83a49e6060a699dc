module accord.dev/contract

go 1.26

require github.com/go-jose/go-jose/v4 v4.1.9
