O
"serve*2.99.0)

pyEagerPyFunc

restore	RestoreV2*
serving_default