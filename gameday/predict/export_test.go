package predict

// PeakModel is peakModel for the external tests and benchmarks.
var PeakModel = peakModel
