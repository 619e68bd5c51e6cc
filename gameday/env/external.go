package env

import (
	"context"
	"fmt"
	"strings"

	"github.com/gameday-dev/gameday/gameday/toxi"
)

// ExternalOptions name a service the user already runs.
type ExternalOptions struct {
	// Toxiproxy is the address of its Toxiproxy API.
	Toxiproxy string
	// Proxies maps each dependency (payment, inventory, sessions) to the
	// name of the proxy in front of it.
	Proxies map[string]string
	// CheckoutURL is the checkout's base URL.
	CheckoutURL string
	// PaymentURL is the payment provider's base URL for reconciliation;
	// "" skips the reconciliation of charges.
	PaymentURL string
	// AdminToken is the checkout's admin token; "" leaves it to the
	// runner's own GAMEDAY_ADMIN_TOKEN, if any.
	AdminToken string
}

// External drills a service the user runs: it creates nothing but faults.
type External struct {
	o      ExternalOptions
	client *toxi.Client
}

var _ Environment = (*External)(nil)

var _ Starter = ExternalOptions{}

func (ExternalOptions) Kind() string { return "external" }
func (ExternalOptions) Fresh() bool  { return false }

// Start opens the external environment; s is not used: the service runs
// with its own settings.
func (o ExternalOptions) Start(_ context.Context, _ Spec) (Environment, error) {
	e, err := NewExternal(o)
	if err != nil {
		return nil, err // not a typed nil
	}
	return e, nil
}

// NewExternal checks the options; it contacts nothing.
func NewExternal(o ExternalOptions) (*External, error) {
	switch {
	case o.Toxiproxy == "":
		return nil, fmt.Errorf("external environment: toxiproxy address: required")
	case o.CheckoutURL == "":
		return nil, fmt.Errorf("external environment: checkout url: required")
	}
	o.CheckoutURL = strings.TrimRight(o.CheckoutURL, "/")
	return &External{o: o, client: toxi.NewClient(o.Toxiproxy)}, nil
}

func (e *External) Info() Info {
	return Info{Kind: "external", Redis: "external", Toxiproxy: e.client.Addr(), Checkout: e.o.CheckoutURL}
}
func (e *External) CheckoutURL() string     { return e.o.CheckoutURL }
func (e *External) PaymentURL() string      { return e.o.PaymentURL }
func (e *External) AdminToken() string      { return e.o.AdminToken }
func (e *External) Toxiproxy() *toxi.Client { return e.client }
func (e *External) ProxyName(dep string) (string, bool) {
	n, ok := e.o.Proxies[dep]
	return n, ok && n != ""
}
func (e *External) Process(string) (Process, bool) { return nil, false }
func (e *External) Close() error                   { return nil }
