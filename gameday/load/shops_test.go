package load

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestArrivalsSpreadTheSaleOverShops(t *testing.T) {
	p := Plan{
		Stages: []Stage{{Duration: time.Second, Target: 6}, {Duration: time.Second, Target: 6}},
		Shops: []ShopLoad{
			{Name: "calm-a"},
			{Name: "hot", Stages: []Stage{{Duration: time.Second, Target: 0}, {Duration: time.Second, Target: 20}}},
			{Name: "calm-b"},
		},
		Patience: time.Second, MaxShoppers: 10,
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	as := p.Arrivals()
	count := map[string]int{}
	for i, a := range as {
		count[a.Shop]++
		if i > 0 && a.At < as[i-1].At {
			t.Fatalf("arrival %d at %v before arrival %d at %v", i, a.At, i-1, as[i-1].At)
		}
	}
	// Background: 3 + 6 = 9 arrivals, round robin over the two calm
	// shops; the hot shop's own ramp: 10 arrivals, all in the second
	// second.
	if count["calm-a"] != 5 || count["calm-b"] != 4 || count["hot"] != 10 || len(as) != 19 {
		t.Fatalf("arrivals by shop %v (%d in all), want calm-a 5, calm-b 4, hot 10", count, len(as))
	}
	var bg []string
	for _, a := range as {
		if a.Shop != "hot" {
			bg = append(bg, a.Shop)
		} else if a.At <= time.Second {
			t.Fatalf("the hot shop's sale starts in its second stage, got an arrival at %v", a.At)
		}
	}
	if want := []string{"calm-a", "calm-b", "calm-a", "calm-b", "calm-a", "calm-b", "calm-a", "calm-b", "calm-a"}; !slices.Equal(bg, want) {
		t.Fatalf("background shops in order %v, want %v", bg, want)
	}
	if !slices.Equal(p.Arrivals(), as) {
		t.Fatal("the same plan gave other arrivals")
	}
	if n := len(Shoppers(p)); n != len(as) {
		t.Fatalf("Shoppers gives %d choices for %d arrivals", n, len(as))
	}
}

func TestShopsAreValidated(t *testing.T) {
	base := Plan{Stages: []Stage{{Duration: time.Second, Target: 1}}, Patience: time.Second, MaxShoppers: 1}
	for name, c := range map[string]struct {
		shops []ShopLoad
		want  string
	}{
		"no name":         {[]ShopLoad{{Name: ""}}, "shops[0].name"},
		"twice":           {[]ShopLoad{{Name: "a"}, {Name: "a"}}, "shops[1].name"},
		"bad stage":       {[]ShopLoad{{Name: "a"}, {Name: "b", Stages: []Stage{{Duration: 0, Target: 1}}}}, "shops[1].stages[0].duration"},
		"no one takes it": {[]ShopLoad{{Name: "a", Stages: base.Stages}}, "at least one must take the plan's stages"},
	} {
		p := base
		p.Shops = c.shops
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", name, err, c.want)
		}
	}
}

// The shop reaches the target with every call of the shopper, and the
// record keeps it.
func TestEveryCallCarriesItsShop(t *testing.T) {
	p := Plan{
		Stages:   []Stage{{Duration: 200 * time.Millisecond, Target: 50}},
		Shops:    []ShopLoad{{Name: "a"}, {Name: "b", Stages: []Stage{{Duration: 200 * time.Millisecond, Target: 50}}}},
		Patience: time.Second, MaxShoppers: 50,
	}
	var mu sync.Mutex
	seen := map[string]string{}
	rep, err := Run(context.Background(), p, TargetFunc(func(_ context.Context, c *Call) (Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := seen[c.CheckoutID]; ok && prev != c.Shop {
			return Answer{}, errors.New("a shopper changed shop")
		}
		seen[c.CheckoutID] = c.Shop
		return Answer{Code: 200, Means: MeansConfirmed}, nil
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	arr := p.Arrivals()
	for _, s := range rep.Shoppers {
		if s.Shop != arr[s.Index].Shop || seen[s.ID] != s.Shop || s.Shop == "" {
			t.Fatalf("shopper %d: record says shop %q, the call said %q, the plan %q", s.Index, s.Shop, seen[s.ID], arr[s.Index].Shop)
		}
	}
}
