package docker

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/env"
)

// The images are named in one place, .env; the compiled-in defaults of the
// containers environment and the compose file's fallbacks must say the same.
func TestImageNamesAgreeWithDotEnv(t *testing.T) {
	vars, err := readDotEnv("../../../.env")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"GAMEDAY_REDIS_IMAGE":     DefaultRedisImage,
		"GAMEDAY_TOXIPROXY_IMAGE": DefaultToxiproxyImage,
		"GAMEDAY_IMAGE":           DefaultGamedayImage,
	}
	compose, err := os.ReadFile("../../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range want {
		if vars[name] != def {
			t.Errorf(".env %s=%q, the containers environment's default is %q", name, vars[name], def)
		}
		if ref := "${" + name + ":-" + def + "}"; !strings.Contains(string(compose), ref) {
			t.Errorf("docker-compose.yml does not use %s", ref)
		}
	}
	if vars["COMPOSE_PROJECT_NAME"] != "gameday" {
		t.Errorf(".env COMPOSE_PROJECT_NAME=%q, want gameday (ComposeDefaults' default)", vars["COMPOSE_PROJECT_NAME"])
	}
}

// The Toxiproxy image is the version of the module gameday embeds and
// scripts/build-images.sh builds it from: a drill on containers and one on
// the local environment run the same Toxiproxy.
func TestToxiproxyImageIsTheModulesVersion(t *testing.T) {
	mod, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/Shopify/toxiproxy/v2" {
			if want := "gameday-toxiproxy:" + strings.TrimPrefix(f[1], "v"); DefaultToxiproxyImage != want {
				t.Errorf("the Toxiproxy image is %s; go.mod has %s, so want %s", DefaultToxiproxyImage, f[1], want)
			}
			return
		}
	}
	t.Fatal("go.mod does not require github.com/Shopify/toxiproxy/v2")
}

// --env compose reads the compose file's variables: the environment first,
// then the file, then the defaults; a bad value names the variable.
func TestComposeDefaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".env")
	if err := os.WriteFile(file, []byte("# ours\nCOMPOSE_PROJECT_NAME=shop\nGAMEDAY_CHECKOUT_PORT=\"9080\"\n\nexport GAMEDAY_PAYMENT_PORT=9081 # ours too\nGAMEDAY_ADMIN_TOKEN=tok-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GAMEDAY_PAYMENT_PORT", "7081")
	t.Setenv("COMPOSE_PROJECT_NAME", "")
	t.Setenv(env.AdminTokenVar, "")
	t.Setenv(env.RedisPasswordVar, "pw")
	t.Setenv("GAMEDAY_POD2_PORT", "9182")
	o, err := ComposeDefaults(file)
	if err != nil {
		t.Fatal(err)
	}
	want := ComposeOptions{Project: "shop", Toxiproxy: "127.0.0.1:8474", CheckoutURL: "http://127.0.0.1:9080", PaymentURL: "http://127.0.0.1:7081", AdminToken: "tok-1",
		RouterURL: "http://127.0.0.1:8090", RoutesAddr: "127.0.0.1:6390", RedisPassword: "pw",
		PodURLs: []string{"http://127.0.0.1:8181", "http://127.0.0.1:9182", "http://127.0.0.1:8183"}}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("ComposeDefaults = %+v, want %+v", o, want)
	}
	if o, err := ComposeDefaults(filepath.Join(dir, "missing")); err != nil || o.CheckoutURL != "http://127.0.0.1:8080" {
		t.Errorf("no file: %+v, %v; want the compose file's defaults", o, err)
	}
	t.Setenv("GAMEDAY_TOXIPROXY_PORT", "toxi")
	if _, err := ComposeDefaults(file); err == nil || !strings.Contains(err.Error(), "GAMEDAY_TOXIPROXY_PORT") {
		t.Errorf("bad port: %v, want an error naming GAMEDAY_TOXIPROXY_PORT", err)
	}
	// Without the checkout's admin token the project is refused before
	// anything is asked of Docker: every setup would answer 401.
	t.Setenv("GAMEDAY_TOXIPROXY_PORT", "")
	if _, err := OpenCompose(context.Background(), ComposeOptions{Project: "none"}); err == nil || !strings.Contains(err.Error(), env.AdminTokenVar+" is not set") {
		t.Errorf("no admin token: %v, want an error naming %s", err, env.AdminTokenVar)
	}
	os.WriteFile(file, []byte("COMPOSE_PROJECT_NAME\n"), 0o644)
	if _, err := ComposeDefaults(file); err == nil || !strings.Contains(err.Error(), file+":1") {
		t.Errorf("bad line: %v, want an error naming %s:1", err, file)
	}
}
