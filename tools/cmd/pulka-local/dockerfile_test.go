package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/tools/stack"
)

// The Dockerfile read as BuildKit reads it (its own parser): the image of
// every service, the Kubernetes-only operator's too, is the service's
// binary built from ./cmd/<service> as /pulka, run by ENTRYPOINT as a
// non-root user on a distroless base, with the health check beside it and
// the admin server on the port compose, the chart and the probes use.
func TestDockerfile_BuildKitReadsEveryServicesImage(t *testing.T) {
	root := repoRoot(t)
	f, err := os.Open(filepath.Join(root, "deploy", "docker", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ast, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("BuildKit's parser: %v", err)
	}
	stages, metaArgs, err := instructions.Parse(ast.AST, nil)
	if err != nil {
		t.Fatalf("BuildKit's instructions: %v", err)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(stages))
	}
	final := stages[len(stages)-1]
	if !strings.HasPrefix(final.BaseName, "gcr.io/distroless/") || !strings.HasSuffix(final.BaseName, ":nonroot") {
		t.Errorf("the image is based on %q, want distroless :nonroot", final.BaseName)
	}

	var build *instructions.Stage
	for i := range stages {
		if stages[i].Name == "build" {
			build = &stages[i]
		}
	}
	if build == nil {
		t.Fatal("no stage named build")
	}
	var builds []string
	for _, c := range build.Commands {
		if r, ok := c.(*instructions.RunCommand); ok {
			builds = append(builds, strings.Join(r.CmdLine, " "))
		}
	}
	if !slices.ContainsFunc(builds, func(cmd string) bool {
		return strings.Contains(cmd, `cd "services/$SERVICE"`) && strings.Contains(cmd, `-o /out/service "./cmd/$SERVICE"`)
	}) {
		t.Errorf("the build stage does not build ./cmd/$SERVICE of services/$SERVICE into /out/service: %q", builds)
	}

	var user, entry string
	copied := map[string]string{} // destination → source, from the build stage
	env := map[string]string{}
	for _, c := range final.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.EntrypointCommand:
			entry = strings.Join(c.CmdLine, " ")
			if c.PrependShell {
				t.Errorf("ENTRYPOINT %q in shell form: distroless has no shell", entry)
			}
		case *instructions.CopyCommand:
			if c.From == "build" {
				for _, src := range c.SourcePaths {
					copied[c.DestPath] = src
				}
			}
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				env[kv.Key] = kv.Value
			}
		}
	}
	if user == "" || strings.HasPrefix(user, "root") || strings.HasPrefix(user, "0") {
		t.Errorf("USER %q: the image must run as a non-root user", user)
	}
	if entry != "/pulka" || copied["/pulka"] != "/out/service" || copied["/healthcheck"] != "/out/healthcheck" {
		t.Errorf("ENTRYPOINT %q with copies %v; want /pulka from /out/service and /healthcheck", entry, copied)
	}
	if env[daemon.EnvAdminAddr] != ":9090" {
		t.Errorf("%s=%q in the image; the probes and Prometheus use :9090", daemon.EnvAdminAddr, env[daemon.EnvAdminAddr])
	}

	// SERVICE picks the directory: every service has its command there,
	// the Kubernetes-only ones included (the chart runs their images).
	hasService := slices.ContainsFunc(metaArgs, func(a instructions.ArgCommand) bool {
		return slices.ContainsFunc(a.Args, func(kv instructions.KeyValuePairOptional) bool { return kv.Key == "SERVICE" })
	}) || slices.ContainsFunc(build.Commands, func(c instructions.Command) bool {
		a, ok := c.(*instructions.ArgCommand)
		return ok && slices.ContainsFunc(a.Args, func(kv instructions.KeyValuePairOptional) bool { return kv.Key == "SERVICE" })
	})
	if !hasService {
		t.Error("the build stage takes no SERVICE argument")
	}
	for _, name := range append(servicesInRepo(t, root), stack.KubernetesOnly()...) {
		if _, err := os.Stat(filepath.Join(root, "services", name, "cmd", name, "main.go")); err != nil {
			t.Errorf("SERVICE=%s would build nothing: %v", name, err)
		}
	}
}
