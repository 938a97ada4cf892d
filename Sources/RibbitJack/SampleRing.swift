import RibbitRealtime

/// The dump's ring lives in RibbitRealtime; this name keeps `RibbitJack.SampleRing` working.
public typealias SampleRing = RibbitRealtime.SampleRing
