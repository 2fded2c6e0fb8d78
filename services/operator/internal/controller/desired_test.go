package controller_test

import (
	"testing"

	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
	"github.com/pulka/pulka/services/operator/internal/controller"
)

func TestDesiredRunners(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	base := pulkav1.RunnerPoolSpec{MinRunners: 2, MaxRunners: 10, TablesPerRunner: 10, TargetUtilizationPercent: 50}
	for _, tc := range []struct {
		rule   string
		tables int
		mutate func(*pulkav1.RunnerPoolSpec)
		want   int
	}{
		{"no tables: the minimum", 0, nil, 2},
		{"tables / (per runner × target), rounded up", 21, nil, 5},
		{"exactly full at the target", 20, nil, 4},
		{"never above the maximum", 1000, nil, 10},
		{"never below the minimum", 1, nil, 2},
		{"target 100%: runners filled to capacity", 21, func(s *pulkav1.RunnerPoolSpec) { s.TargetUtilizationPercent = 100 }, 3},
		{"replicas wins over the tables", 1000, func(s *pulkav1.RunnerPoolSpec) { s.Replicas = i32(4) }, 4},
		{"replicas is bounded by the maximum", 0, func(s *pulkav1.RunnerPoolSpec) { s.Replicas = i32(50) }, 10},
		{"replicas is bounded by the minimum", 0, func(s *pulkav1.RunnerPoolSpec) { s.Replicas = i32(0) }, 2},
		{"min 0 and no tables: no runner", 0, func(s *pulkav1.RunnerPoolSpec) { s.MinRunners = 0 }, 0},
		{"a zero target or per-runner count is taken as 1, not a division by zero", 3,
			func(s *pulkav1.RunnerPoolSpec) { s.TablesPerRunner, s.TargetUtilizationPercent = 0, 0 }, 10},
	} {
		spec := base
		if tc.mutate != nil {
			tc.mutate(&spec)
		}
		if got := controller.DesiredRunners(&spec, tc.tables); got != tc.want {
			t.Errorf("%s: DesiredRunners(%d tables) = %d, want %d", tc.rule, tc.tables, got, tc.want)
		}
	}
}

// The template hash changes with the template and only with it.
func TestTemplateHash(t *testing.T) {
	a := pulkav1.RunnerTemplate{Image: "runner:1"}
	b := a
	if controller.TemplateHash(&a) != controller.TemplateHash(&b) {
		t.Error("equal templates hash differently")
	}
	b.Image = "runner:2"
	if controller.TemplateHash(&a) == controller.TemplateHash(&b) {
		t.Error("a new image keeps the hash")
	}
}
