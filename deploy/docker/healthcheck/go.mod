module github.com/pulka/pulka/deploy/docker/healthcheck

go 1.26.0
