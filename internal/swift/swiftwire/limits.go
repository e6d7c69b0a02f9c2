package swiftwire

// Swift's default constraints (swift.conf [swift-constraints]), enforced as Swift enforces them
// and reported by /info.
const (
	MaxMetaNameLength      = 128
	MaxMetaValueLength     = 256
	MaxMetaCount           = 90
	MaxMetaOverallSize     = 4096
	MaxHeaderSize          = 8192
	MaxObjectNameLength    = 1024
	MaxContainerNameLength = 256
	MaxAccountNameLength   = 256
	ListingLimit           = 10000
)
