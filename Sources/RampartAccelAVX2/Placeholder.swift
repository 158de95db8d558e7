import Swift
