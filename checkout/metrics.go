package checkout

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout/admission"
)

// metrics are the checkout's Prometheus series, on a registry of its own.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	degraded *prometheus.CounterVec
	voids    *prometheus.CounterVec
	product  *prometheus.CounterVec
}

func newMetrics(guards []*breakers.Guard, room *admission.Room, line *paymentLine) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gameday_checkout_requests_total",
			Help: "Checkout answers by outcome and HTTP status.",
		}, []string{"outcome", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gameday_checkout_request_duration_seconds",
			Help:    "Time to answer a checkout, by outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"outcome"}),
		degraded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gameday_checkout_degraded_total",
			Help: "Checkouts answered in a degraded way, by reason.",
		}, []string{"reason"}),
		voids: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gameday_checkout_voids_total",
			Help: "Charge voids by result: requested, done, failed (retried by the sweeper), called_off.",
		}, []string{"result"}),
	}
	m.product = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gameday_product_cache_total",
		Help: "Product page descriptions by how they were had: hit (the cache), miss (the cache had none), stale (the catalogue failed; the last one had was served), failed (none could be had).",
	}, []string{"result"})
	m.reg.MustRegister(m.requests, m.duration, m.degraded, m.voids, m.product,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gameday_admission_in_progress",
			Help: "Checkouts admitted and not answered yet.",
		}, func() float64 { return float64(room.Stats().InProgress) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gameday_admission_max_in_progress",
			Help: "The most checkouts in progress at once since the start or POST /admin/admission/reset-max.",
		}, func() float64 { return float64(room.Stats().MaxInProgress) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gameday_admission_waiting_room_answers_total",
			Help: "Checkouts answered 503 waiting_room by the admission room.",
		}, func() float64 { return float64(room.Stats().WaitingRoomAnswers) }),
	)
	if line != nil {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "gameday_checkout_payment_line_waiting",
				Help: "Charges waiting in the checkout's line for a payment slot.",
			}, func() float64 { n, _ := line.counts(); return float64(n) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "gameday_checkout_payment_line_too_late_total",
				Help: "Charges that left the payment line too_late: a slot could not come in time for them to finish before the shopper's deadline.",
			}, func() float64 { _, n := line.counts(); return float64(n) }),
		)
	}
	for _, g := range guards {
		labels := prometheus.Labels{"dependency": g.Name()}
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "gameday_breaker_state",
				Help:        "Circuit breaker state: 0 closed, 1 half-open, 2 open.",
				ConstLabels: labels,
			}, func() float64 { return float64(g.State()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        "gameday_breaker_transitions_total",
				Help:        "Circuit breaker state changes.",
				ConstLabels: labels,
			}, func() float64 { return float64(g.TransitionCount()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "gameday_breaker_in_flight",
				Help:        "Calls in flight through the dependency's bulkhead.",
				ConstLabels: labels,
			}, func() float64 { return float64(g.InFlight()) }),
		)
	}
	return m
}

func (m *metrics) observe(r Response, d time.Duration) {
	m.requests.WithLabelValues(string(r.Status), strconv.Itoa(StatusCode(r.Status))).Inc()
	m.duration.WithLabelValues(string(r.Status)).Observe(d.Seconds())
}
