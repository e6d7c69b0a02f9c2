package objects

// SysMeta keys of upload markers and completed multipart objects: package multipart writes
// them; GetObjectAttributes reads them from completed objects.
const (
	SysUploadChecksumAlgorithm = "mpu-checksum-algorithm"
	SysUploadChecksumType      = "mpu-checksum-type"
	SysUploadID                = "mpu-upload-id" // on the completed object, to answer a retried completion
)
