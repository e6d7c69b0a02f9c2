package objects

import ()

// Multipart uploads are built on ordinary objects, as Swift's s3api does. Each bucket has a
// hidden container (uploadsContainer) holding, per upload:
//
//	<key>\x00<uploadID>                 the upload marker: the object's future metadata
//	<key>\x00<uploadID>\x00<part 00001> each part, an ordinary object
//
// Keys cannot contain NUL, so a marker sorts with its key and its parts right after it.
// Completion writes the object as a manifest over the parts (which it then owns: replacing or
// deleting the object deletes them) and removes the marker and the parts it did not use.

// SysMeta keys of upload markers and completed objects.
const (
	SysUploadChecksumAlgorithm = "mpu-checksum-algorithm"
	SysUploadChecksumType      = "mpu-checksum-type"
	SysUploadID                = "mpu-upload-id" // on the completed object, to answer a retried completion
)
