package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// kubelet plays the kubelet of one node for the runner pods of a
// namespace (envtest has no kubelet, no scheduler, no controllers):
//
//   - a new pod is bound to the node and its container run: a real table
//     runner (stacktest's StartRunner) with the pod's environment, its name
//     as the runner's id (the downward API), in a network namespace of its
//     own reaching Redis through a veth pair when the test runs as root (a
//     pod's network), else on this host's; the pod is set Ready when the
//     runner's /readyz says so (the readiness probe);
//   - a pod being deleted has its runner sent SIGTERM, and is removed once
//     the runner stopped (the kubelet's graceful termination);
//   - a runner that dies on its own (SIGKILL) has its pod reported Failed
//     notice later (the kubelet sees a container's end at its next relist,
//     every second by default).
type kubelet struct {
	s      *stack
	c      ctrlclient.Client
	ns     string
	node   string
	notice time.Duration
	netns  bool

	mu     sync.Mutex
	pods   map[string]*podRun
	nets   int
	errs   []error
	cancel context.CancelFunc
	done   chan struct{}

	bindMu sync.Mutex
	binds  []string // the addresses Redis listens on: loopback and the pods' networks' host ends
}

// podRun is what the kubelet runs for one pod.
type podRun struct {
	name     string
	proc     *stacktest.Process // nil until its runner started
	net      *podNet            // nil: the host's network
	ready    bool               // set Ready
	exitedAt time.Time          // when its runner ended (zero: running)
	reported bool               // reported Failed
	stopping bool               // being terminated
}

// startKubelet runs the kubelet of node for the pods of ns until t ends.
// Without root the pods share this host's network (no partition is
// possible).
func startKubelet(t *testing.T, s *stack, k *kube, ns string, notice time.Duration) *kubelet {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	kl := &kubelet{s: s, c: k.c, ns: ns, node: "node-1", notice: notice, netns: canNetns(),
		pods: map[string]*podRun{}, binds: []string{"127.0.0.1"}, cancel: cancel, done: make(chan struct{})}
	if !kl.netns {
		t.Log("not root, or no ip(8): the runner pods share this host's network")
	}
	// The node, Ready: the kubelet registers it and reports its status.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: kl.node}}
	if err := k.c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: now, LastTransitionTime: now}}
	if err := k.c.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	go kl.run(ctx)
	t.Cleanup(func() {
		cancel()
		<-kl.done
		kl.mu.Lock()
		defer kl.mu.Unlock()
		var wg sync.WaitGroup
		for _, r := range kl.pods {
			if r.proc != nil {
				wg.Go(r.proc.Stop)
			}
		}
		wg.Wait()
		for _, r := range kl.pods {
			if r.net != nil {
				r.net.remove()
			}
		}
		for _, err := range kl.errs {
			t.Errorf("kubelet: %v", err)
		}
	})
	return kl
}

func canNetns() bool {
	if os.Geteuid() != 0 {
		return false
	}
	_, err := exec.LookPath("ip")
	return err == nil
}

func (kl *kubelet) fail(err error) {
	kl.mu.Lock()
	kl.errs = append(kl.errs, err)
	kl.mu.Unlock()
}

// run is the kubelet's sync loop, every 20 ms.
func (kl *kubelet) run(ctx context.Context) {
	defer close(kl.done)
	var work sync.WaitGroup
	defer work.Wait()
	for ctx.Err() == nil {
		var l corev1.PodList
		if err := kl.c.List(ctx, &l, ctrlclient.InNamespace(kl.ns), ctrlclient.HasLabels{poolLabel}); err != nil {
			if ctx.Err() == nil {
				kl.fail(fmt.Errorf("list pods: %w", err))
			}
			return
		}
		seen := map[string]bool{}
		for i := range l.Items {
			p := l.Items[i].DeepCopy()
			seen[p.Name] = true
			kl.mu.Lock()
			r := kl.pods[p.Name]
			switch {
			case r == nil && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded:
				r = &podRun{name: p.Name}
				kl.pods[p.Name] = r
				work.Go(func() { kl.startPod(ctx, p, r) })
			case r != nil && p.DeletionTimestamp != nil && !r.stopping:
				r.stopping = true
				work.Go(func() { kl.terminate(ctx, r, true) })
			case r != nil && !r.exitedAt.IsZero() && !r.reported && !r.stopping && time.Since(r.exitedAt) >= kl.notice:
				r.reported = true
				work.Go(func() {
					err := onPod(ctx, kl.c, kl.ns, r.name, func(p *corev1.Pod) error { return setFailed(ctx, kl.c, p) })
					if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
						kl.fail(fmt.Errorf("report pod %s failed: %w", r.name, err))
					}
				})
			}
			kl.mu.Unlock()
		}
		kl.mu.Lock()
		for name, r := range kl.pods {
			if !seen[name] && !r.stopping {
				r.stopping = true // removed at once (no node bound yet): stop what runs
				work.Go(func() { kl.terminate(ctx, r, false) })
			}
		}
		kl.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startPod binds the pod to the node, runs its runner and sets it Ready.
func (kl *kubelet) startPod(ctx context.Context, p *corev1.Pod, r *podRun) {
	if p.Spec.NodeName == "" {
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: kl.node}}
		if err := kl.c.SubResource("binding").Create(ctx, p, b); err != nil {
			if ctx.Err() == nil && !apierrors.IsNotFound(err) {
				kl.fail(fmt.Errorf("bind pod %s: %w", p.Name, err))
			}
			return
		}
	}
	spec := stacktest.RunnerSpec{ID: p.Name}
	for _, c := range p.Spec.Containers {
		for _, e := range c.Env {
			switch {
			case e.Name == daemon.EnvAdminAddr:
				// The pod's IP is the kubelet's to give: the admin server
				// listens on it (or on a free port of this host).
			case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				spec.Env = append(spec.Env, e.Name+"="+p.Name)
			case e.ValueFrom == nil:
				spec.Env = append(spec.Env, e.Name+"="+e.Value)
			default:
				kl.fail(fmt.Errorf("pod %s: env %s from %v is not one this kubelet knows", p.Name, e.Name, e.ValueFrom))
			}
		}
		for _, port := range c.Ports {
			if port.Name == "admin" {
				spec.AdminPort = int(port.ContainerPort)
			}
		}
	}
	if kl.netns {
		kl.mu.Lock()
		kl.nets++
		n := kl.nets
		kl.mu.Unlock()
		pn, err := newPodNet(n)
		if err != nil {
			kl.fail(fmt.Errorf("pod %s's network: %w", p.Name, err))
			return
		}
		kl.mu.Lock()
		r.net = pn
		kl.mu.Unlock()
		if err := kl.bind(ctx, pn.hostIP, true); err != nil {
			kl.fail(fmt.Errorf("pod %s's network: %w", p.Name, err))
			return
		}
		spec.Env = append(spec.Env, daemon.EnvRedisAddr+"="+pn.hostIP+":"+strconv.Itoa(kl.s.RedisServer().Port()))
		spec.Wrap = []string{"ip", "netns", "exec", pn.name}
		spec.AdminHost = pn.podIP
	} else {
		spec.AdminPort = 0 // one host, many pods: a free port each
	}
	proc, err := kl.s.StartRunner(spec)
	if err != nil {
		if ctx.Err() == nil {
			kl.fail(fmt.Errorf("start the runner of pod %s: %w", p.Name, err))
		}
		return
	}
	kl.mu.Lock()
	r.proc = proc
	kl.mu.Unlock()
	go func() {
		<-proc.Exited()
		kl.mu.Lock()
		r.exitedAt = time.Now()
		kl.mu.Unlock()
	}()
	err = onPod(ctx, kl.c, kl.ns, p.Name, func(p *corev1.Pod) error { return setReady(ctx, kl.c, p, true) })
	if err != nil {
		if ctx.Err() == nil && !apierrors.IsNotFound(err) {
			kl.fail(fmt.Errorf("set pod %s Ready: %w", p.Name, err))
		}
		return
	}
	kl.mu.Lock()
	r.ready = true
	kl.mu.Unlock()
}

// terminate stops a pod's runner (SIGTERM, then SIGKILL after the
// harness's patience) and, for a pod being deleted, removes it as the
// kubelet does once its containers stopped.
func (kl *kubelet) terminate(ctx context.Context, r *podRun, remove bool) {
	// The runner may still be starting: wait for it (or for its failure).
	for ctx.Err() == nil && !kl.startFailed(r) {
		kl.mu.Lock()
		proc := r.proc
		kl.mu.Unlock()
		if proc != nil {
			proc.Stop()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if remove {
		var p corev1.Pod
		p.Name, p.Namespace = r.name, kl.ns
		if err := kl.c.Delete(ctx, &p, ctrlclient.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			kl.fail(fmt.Errorf("remove pod %s: %w", r.name, err))
		}
	}
	kl.mu.Lock()
	pn := r.net
	r.net = nil
	kl.mu.Unlock()
	if pn != nil {
		// Redis lets go of the address first: a bind to an address that
		// is gone fails.
		if err := kl.bind(ctx, pn.hostIP, false); err != nil && ctx.Err() == nil {
			kl.fail(err)
		}
		pn.remove()
	}
}

// bind makes Redis listen on addr too (on), or no longer (off): Redis
// listens on the host's end of every pod's veth pair, and refuses to bind
// an address that is gone.
func (kl *kubelet) bind(ctx context.Context, addr string, on bool) error {
	kl.bindMu.Lock()
	defer kl.bindMu.Unlock()
	if on {
		kl.binds = append(kl.binds, addr)
	} else {
		kl.binds = slices.DeleteFunc(kl.binds, func(a string) bool { return a == addr })
	}
	binds := strings.Join(kl.binds, " ")
	if err := kl.s.Redis().ConfigSet(ctx, "bind", binds).Err(); err != nil {
		return fmt.Errorf("redis CONFIG SET bind %q: %w", binds, err)
	}
	return nil
}

// startFailed reports whether a pod's start gave up (its error is among
// the kubelet's).
func (kl *kubelet) startFailed(r *podRun) bool {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	for _, err := range kl.errs {
		if strings.Contains(err.Error(), "pod "+r.name) {
			return true
		}
	}
	return false
}

// runner is what the kubelet runs for pod name, as it is now (a copy);
// nil if its runner never started.
func (kl *kubelet) runner(name string) *podRun {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	r := kl.pods[name]
	if r == nil || r.proc == nil {
		return nil
	}
	c := *r
	return &c
}

// readyPods are the pods whose runner runs, set Ready and not being
// stopped.
func (kl *kubelet) readyPods() []string {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	var out []string
	for name, r := range kl.pods {
		if r.ready && r.exitedAt.IsZero() && !r.stopping {
			out = append(out, name)
		}
	}
	return out
}

// check fails t with the kubelet's errors so far.
func (kl *kubelet) check(t testing.TB) {
	t.Helper()
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if err := errors.Join(kl.errs...); err != nil {
		t.Fatalf("kubelet: %v", err)
	}
}

// podNet is a pod's network namespace, joined to this host's by a veth
// pair: the runner in it reaches Redis at hostIP, and the test cuts it
// off by taking the host's end of the pair down.
type podNet struct {
	name, hostIf, hostIP, podIP string
}

// newPodNet makes the n-th pod network of this test binary: 10.X.Y.Z/30
// with X from the process id, so that test binaries running at once do
// not collide.
func newPodNet(n int) (*podNet, error) {
	pid := os.Getpid()
	base := fmt.Sprintf("10.%d.%d.%d", 100+pid%100, n/64%256, n%64*4)
	ip := func(last int) string {
		parts := strings.Split(base, ".")
		v, _ := strconv.Atoi(parts[3])
		return fmt.Sprintf("%s.%s.%s.%d", parts[0], parts[1], parts[2], v+last)
	}
	pn := &podNet{
		name:   fmt.Sprintf("pulka-e2e-%d-%d", pid, n),
		hostIf: fmt.Sprintf("pe%dh%d", pid%100000, n),
		hostIP: ip(1), podIP: ip(2),
	}
	podIf := fmt.Sprintf("pe%dp%d", pid%100000, n)
	steps := [][]string{
		{"ip", "netns", "add", pn.name},
		{"ip", "link", "add", pn.hostIf, "type", "veth", "peer", "name", podIf},
		{"ip", "link", "set", podIf, "netns", pn.name},
		{"ip", "addr", "add", pn.hostIP + "/30", "dev", pn.hostIf},
		{"ip", "link", "set", pn.hostIf, "up"},
		{"ip", "netns", "exec", pn.name, "ip", "addr", "add", pn.podIP + "/30", "dev", podIf},
		{"ip", "netns", "exec", pn.name, "ip", "link", "set", podIf, "up"},
		{"ip", "netns", "exec", pn.name, "ip", "link", "set", "lo", "up"},
	}
	for i, args := range steps {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			if i > 0 {
				pn.remove()
			}
			return nil, fmt.Errorf("%v: %w: %s", args, err, out)
		}
	}
	return pn, nil
}

// cut takes the link down: the pod's packets go nowhere, its pod stays
// Ready (no kubelet probe goes over this link).
func (pn *podNet) cut() error { return ipLink(pn.hostIf, "down") }

// heal brings the link back.
func (pn *podNet) heal() error { return ipLink(pn.hostIf, "up") }

func ipLink(dev, state string) error {
	if out, err := exec.Command("ip", "link", "set", dev, state).CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set %s %s: %w: %s", dev, state, err, out)
	}
	return nil
}

// remove deletes the namespace (and with it the veth pair).
func (pn *podNet) remove() {
	_ = exec.Command("ip", "netns", "del", pn.name).Run()
	_ = exec.Command("ip", "link", "del", pn.hostIf).Run()
}
