module github.com/pulka/pulka/services/lobby

go 1.26.0

require (
	github.com/pulka/pulka/pkg v0.0.0
	golang.org/x/crypto v0.59.0
)

require golang.org/x/sys v0.50.0 // indirect
