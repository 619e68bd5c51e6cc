// Package kubernetes holds the manifests that run a drill's load from a
// Kubernetes Indexed Job (docs/scale.md); its test keeps them decodable
// into the Kubernetes API types and in step with gameday's flags.
package kubernetes_test

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestManifestDecodesStrictly: every document is a Kubernetes object its
// API types hold with no field unknown, and the parts agree: the workers'
// Job is Indexed with a pod per shard, as many as the coordinator's
// -shards; the workers reach the coordinator through the Service, on the
// port it listens on; both read the token from one Secret.
func TestManifestDecodesStrictly(t *testing.T) {
	data, err := os.ReadFile("gameday-load.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var svc *corev1.Service
	jobs := map[string]*batchv1.Job{}
	claims := map[string]*corev1.PersistentVolumeClaim{}
	for i, doc := range bytes.Split(data, []byte("\n---\n")) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		switch head.APIVersion + " " + head.Kind {
		case "v1 PersistentVolumeClaim":
			pvc := &corev1.PersistentVolumeClaim{}
			strict(t, i, doc, pvc)
			claims[pvc.Name] = pvc
		case "v1 Service":
			svc = &corev1.Service{}
			strict(t, i, doc, svc)
		case "batch/v1 Job":
			j := &batchv1.Job{}
			strict(t, i, doc, j)
			jobs[j.Name] = j
		default:
			t.Fatalf("document %d: %s %s is not one this test knows", i, head.APIVersion, head.Kind)
		}
	}
	coord, workers := jobs["gameday-coordinator"], jobs["gameday-workers"]
	if svc == nil || coord == nil || workers == nil {
		t.Fatalf("want the Service and the two Jobs; have service %v, jobs %v", svc != nil, len(jobs))
	}

	c := only(t, coord.Spec.Template.Spec.Containers)
	w := only(t, workers.Spec.Template.Spec.Containers)
	flags := map[string]string{}
	for _, a := range c.Args {
		if k, v, ok := strings.Cut(a, "="); ok {
			flags[k] = v
		}
	}
	if c.Args[0] != "run" || flags["-workers"] != "remote" {
		t.Errorf("coordinator args %q: want run ... -workers=remote", c.Args)
	}
	if workers.Spec.CompletionMode == nil || *workers.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Error("the workers' Job is not Indexed: a pod would not know its shard")
	}
	n := fmt.Sprint(*workers.Spec.Completions)
	if flags["-shards"] != n || workers.Spec.Parallelism == nil || *workers.Spec.Parallelism != *workers.Spec.Completions {
		t.Errorf("coordinator -shards=%s, workers completions %s and parallelism %v: want one number (every shard at once)", flags["-shards"], n, ptrString(workers.Spec.Parallelism))
	}
	if len(w.Args) != 1 || w.Args[0] != "worker" {
		t.Errorf("worker args %q", w.Args)
	}

	_, listenPort, _ := strings.Cut(flags["-coordinator-listen"], ":")
	u, err := url.Parse(envValue(w, "GAMEDAY_COORDINATOR"))
	if err != nil {
		t.Fatal(err)
	}
	port := only(t, svc.Spec.Ports)
	if u.Hostname() != svc.Name || u.Port() != fmt.Sprint(port.Port) || port.TargetPort.String() != listenPort {
		t.Errorf("workers call %s; the Service %s listens on %d for %s; the coordinator on %s", u, svc.Name, port.Port, port.TargetPort.String(), listenPort)
	}
	for k, v := range svc.Spec.Selector {
		if coord.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the coordinator's pod does not carry", k, v)
		}
	}
	for _, ct := range []corev1.Container{c, w} {
		ref := secretOf(ct, "GAMEDAY_SHARD_TOKEN")
		if ref == nil || ref.Name != "gameday-shard-token" || ref.Key != "token" {
			t.Errorf("%s: the token is not read from secret gameday-shard-token, key token: %+v", ct.Name, ref)
		}
		if strings.Contains(strings.Join(ct.Args, " "), "TOKEN") {
			t.Errorf("%s: a token on the command line: %q", ct.Name, ct.Args)
		}
	}
	// The fault journal outlives the coordinator's pod: it is on a claim
	// the manifest makes, never on the pod's emptyDir, which goes with it.
	journal := flags["-journal"]
	var vol string
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(journal, strings.TrimSuffix(m.MountPath, "/")+"/") {
			vol = m.Name
		}
	}
	var claim string
	for _, v := range coord.Spec.Template.Spec.Volumes {
		if v.Name == vol && v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if journal == "" || claim == "" || claims[claim] == nil {
		t.Errorf("the coordinator's journal %q is on volume %q, not on a claim this manifest makes (%q): a killed coordinator's faults would be forgotten with its pod", journal, vol, claim)
	}
	if sc := coord.Spec.Template.Spec.SecurityContext; sc == nil || sc.FSGroup == nil {
		t.Error("the coordinator runs as non-root: its pod needs an fsGroup to write the journal's volume")
	}
	for _, j := range jobs {
		if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("job %s: a failed pod must not be run again (backoffLimit 0, restartPolicy Never)", j.Name)
		}
	}
}

func strict(t *testing.T, i int, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("document %d: %v", i, err)
	}
}

func only[T any](t *testing.T, xs []T) T {
	t.Helper()
	if len(xs) != 1 {
		t.Fatalf("want one, have %d", len(xs))
	}
	return xs[0]
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func secretOf(c corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
