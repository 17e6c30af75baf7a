// Package kubernetes holds the manifests of deploy/kubernetes; its test
// decodes them with the k8s.io/api types, as strictly as the API server's
// strict field validation, and checks what a run needs of them.
package kubernetes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// kinds maps each apiVersion/kind a manifest here may hold to its
// k8s.io/api type and the checks of that kind. A kind not listed fails the
// test: add it here, with its checks, when a manifest needs it.
var kinds = map[string]kind{
	"v1/ConfigMap":             of[corev1.ConfigMap](nil),
	"v1/PersistentVolumeClaim": of(checkPVC),
	"batch/v1/Job":             of(checkJob),
	"batch/v1/CronJob":         of(checkCronJob),
}

// kind decodes one document into its typed struct and checks it.
type kind struct {
	decode func(doc []byte) (any, error)
	check  func(c *checker, o *object)
}

// of is the kind of type T, checked by check (nil: decoding is the check).
func of[T any](check func(c *checker, o *object, v *T)) kind {
	return kind{
		decode: func(doc []byte) (any, error) {
			v := new(T)
			return v, decodeStrict(doc, v)
		},
		check: func(c *checker, o *object) {
			if check != nil {
				check(c, o, o.value.(*T))
			}
		},
	}
}

// object is one decoded document.
type object struct {
	file  string // base name
	index int    // 1-based, counting every document of the file
	kind  string // apiVersion/kind
	meta  metav1.ObjectMeta
	value any // a pointer to the kind's k8s.io/api type
}

func (o *object) String() string {
	return fmt.Sprintf("%s document %d (%s %s)", o.file, o.index, o.kind, o.meta.Name)
}

// decodeStrict decodes one YAML document into v as the API server's strict
// field validation does: duplicate keys, unknown fields and fields whose
// case differs from the json tag are errors (encoding/json alone would
// accept "Image" for "image").
func decodeStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// decodeFile splits a manifest into its documents and decodes each with
// the type of its apiVersion/kind. Documents that are only comments are
// counted but hold no object.
func decodeFile(file string, data []byte) ([]*object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*object
	var errs []error
	for index := 1; ; index++ {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return objs, fmt.Errorf("%s document %d: %w", file, index, err)
		}
		o, err := decodeDocument(file, index, doc)
		if err != nil {
			errs = append(errs, err)
		} else if o != nil {
			objs = append(objs, o)
		}
	}
	return objs, errors.Join(errs...)
}

func decodeDocument(file string, index int, doc []byte) (*object, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("%s document %d: %w", file, index, err)
	}
	if t := bytes.TrimSpace(j); bytes.Equal(t, []byte("null")) || len(t) == 0 {
		return nil, nil
	}
	var head struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(j, &head); err != nil {
		return nil, fmt.Errorf("%s document %d: %w", file, index, err)
	}
	o := &object{file: file, index: index, kind: head.APIVersion + "/" + head.Kind, meta: head.Metadata}
	if head.APIVersion == "" || head.Kind == "" {
		return nil, fmt.Errorf("%s: want both apiVersion and kind", o)
	}
	k, ok := kinds[o.kind]
	if !ok {
		return nil, fmt.Errorf("%s: unknown kind (not in kinds: add its k8s.io/api type there)", o)
	}
	if o.value, err = k.decode(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", o, err)
	}
	if o.meta.Name == "" {
		return nil, fmt.Errorf("%s: want metadata.name", o)
	}
	return o, nil
}

// checker gathers the findings of the checks, with what they need across
// files (the claims declared).
type checker struct {
	t        *testing.T
	findings int
	claims   map[string]bool // PersistentVolumeClaim names
	uses     []claimUse
}

type claimUse struct {
	where, claim string
}

func (c *checker) errorf(o *object, format string, args ...any) {
	c.t.Helper()
	c.findings++
	c.t.Errorf("%s: %s", o, fmt.Sprintf(format, args...))
}

func checkPVC(c *checker, o *object, pvc *corev1.PersistentVolumeClaim) {
	c.claims[o.meta.Name] = true
	if len(pvc.Spec.AccessModes) == 0 {
		c.errorf(o, "want spec.accessModes")
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || q.Sign() <= 0 {
		c.errorf(o, "want a positive spec.resources.requests.storage, have %q", q.String())
	}
}

func checkJob(c *checker, o *object, job *batchv1.Job) {
	checkJobSpec(c, o, &job.Spec)
}

func checkCronJob(c *checker, o *object, cj *batchv1.CronJob) {
	if cj.Spec.Schedule == "" {
		c.errorf(o, "want spec.schedule")
	}
	checkJobSpec(c, o, &cj.Spec.JobTemplate.Spec)
}

// checkJobSpec checks what the API server would refuse in a Job and what
// lockchaos needs of an Indexed one: an Indexed Job here is a sharded
// lockchaos run, whose containers take the shard from JOB_COMPLETION_INDEX
// and the total from LOCKCHAOS_SHARD_TOTAL, which must equal completions.
func checkJobSpec(c *checker, o *object, spec *batchv1.JobSpec) {
	pod := &spec.Template.Spec
	if p := pod.RestartPolicy; p != corev1.RestartPolicyNever && p != corev1.RestartPolicyOnFailure {
		c.errorf(o, "a Job's restartPolicy must be Never or OnFailure, have %q", p)
	}
	if spec.CompletionMode != nil && *spec.CompletionMode == batchv1.IndexedCompletion {
		if spec.Completions == nil {
			c.errorf(o, "an Indexed Job wants spec.completions")
		} else {
			for _, ct := range pod.Containers {
				checkShardTotal(c, o, ct, int(*spec.Completions))
			}
		}
	}
	checkPod(c, o, pod)
}

func checkShardTotal(c *checker, o *object, ct corev1.Container, completions int) {
	i := slices.IndexFunc(ct.Env, func(e corev1.EnvVar) bool { return e.Name == "LOCKCHAOS_SHARD_TOTAL" })
	if i < 0 {
		c.errorf(o, "container %s: an Indexed Job wants LOCKCHAOS_SHARD_TOTAL (lockchaos exits 2 without it)", ct.Name)
		return
	}
	if n, err := strconv.Atoi(ct.Env[i].Value); err != nil || n != completions {
		c.errorf(o, "container %s: LOCKCHAOS_SHARD_TOTAL=%q, want the Job's completions, %d", ct.Name, ct.Env[i].Value, completions)
	}
}

// checkPod checks every container has an image and something to run, that
// its resources are positive and its limits not below its requests, and
// that its mounts name volumes of the pod.
func checkPod(c *checker, o *object, pod *corev1.PodSpec) {
	if len(pod.Containers) == 0 {
		c.errorf(o, "want at least one container")
	}
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
		if v.PersistentVolumeClaim != nil {
			c.uses = append(c.uses, claimUse{where: o.String() + " volume " + v.Name, claim: v.PersistentVolumeClaim.ClaimName})
		}
	}
	for _, ct := range slices.Concat(pod.InitContainers, pod.Containers) {
		if ct.Name == "" {
			c.errorf(o, "a container without a name")
		}
		if ct.Image == "" {
			c.errorf(o, "container %s: want an image", ct.Name)
		}
		if len(ct.Command) == 0 && len(ct.Args) == 0 {
			c.errorf(o, "container %s: want a command or args", ct.Name)
		}
		for name, q := range ct.Resources.Requests {
			if q.Sign() <= 0 {
				c.errorf(o, "container %s: request %s=%s, want it positive", ct.Name, name, q.String())
			}
			if l, ok := ct.Resources.Limits[name]; ok && l.Cmp(q) < 0 {
				c.errorf(o, "container %s: limit %s=%s is below its request %s", ct.Name, name, l.String(), q.String())
			}
		}
		for _, m := range ct.VolumeMounts {
			if !volumes[m.Name] {
				c.errorf(o, "container %s: mounts volume %q, which the pod does not declare", ct.Name, m.Name)
			}
			if m.MountPath == "" {
				c.errorf(o, "container %s: volume %q without a mountPath", ct.Name, m.Name)
			}
		}
	}
}

// TestManifests decodes every document of every manifest here with its
// k8s.io/api type and checks it.
func TestManifests(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yml, _ := filepath.Glob("*.yml")
	files = append(files, yml...)
	if len(files) == 0 {
		t.Fatal("no manifests (*.yaml) in deploy/kubernetes")
	}
	c := &checker{t: t, claims: map[string]bool{}}
	var objs []*object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeFile(f, data)
		if err != nil {
			t.Error(err)
		}
		if len(got) == 0 && err == nil {
			t.Errorf("%s: no Kubernetes object in it", f)
		}
		objs = append(objs, got...)
	}
	for _, o := range objs {
		before := c.findings
		kinds[o.kind].check(c, o)
		if c.findings == before {
			t.Logf("%s: ok", o)
		}
	}
	// The claims of every file are known now: a pod may use one declared
	// in another file.
	for _, u := range c.uses {
		if !c.claims[u.claim] {
			t.Errorf("%s: claim %q is not a PersistentVolumeClaim of deploy/kubernetes", u.where, u.claim)
		}
	}
}

// TestDecodeIsStrict holds the mistakes the decoding must refuse, so a
// looser decoder cannot pass TestManifests by accepting a typo.
func TestDecodeIsStrict(t *testing.T) {
	const job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: i\n          command: [x]\n"
	cases := []struct {
		name, doc, want string
	}{
		{"unknown field", strings.Replace(job, "command:", "comand:", 1), `unknown field "spec.template.spec.containers[0].comand"`},
		{"field case", strings.Replace(job, "image:", "Image:", 1), `unknown field "spec.template.spec.containers[0].Image"`},
		{"duplicate key", strings.Replace(job, "  name: j\n", "  name: j\n  name: k\n", 1), `"name" already set`},
		{"unknown kind", strings.Replace(job, "kind: Job", "kind: Jbo", 1), "x.yaml document 2 (batch/v1/Jbo j): unknown kind"},
		{"no kind", strings.Replace(job, "kind: Job\n", "", 1), "want both apiVersion and kind"},
		{"bad quantity", strings.Replace(job, "command: [x]\n", "command: [x]\n          resources:\n            requests:\n              memory: 1GB2\n", 1), "quantities must match"},
		{"string as int", strings.Replace(job, "spec:\n  template:", "spec:\n  completions: \"4\"\n  template:", 1), "cannot unmarshal string"},
	}
	if _, err := decodeFile("x.yaml", []byte(job)); err != nil {
		t.Fatalf("the valid Job: %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeFile("x.yaml", []byte("# a comment\n---\n"+tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
