module accord.dev/interop-go-client

go 1.26

require (
	accord.dev/contract v0.0.0
	github.com/a2aproject/a2a-go/v2 v2.1.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/mod v0.33.0 // indirect
)

replace accord.dev/contract => ../../../contracts/go
