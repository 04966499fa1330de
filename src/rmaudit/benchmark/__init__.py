"""Assembling a benchmark's data: prompt sampling (:mod:`.sampling`, :mod:`.embedding`),
perturbations for distribution shift (:mod:`.perturb`), preference-pair files (:mod:`.pairs`),
data files and the values matched to them by natural keys (:mod:`.tabular`,
:mod:`.keyed_files`), benchmarks made elsewhere (:mod:`.layouts`) and rmaudit's own portable
benchmark files (:mod:`.portable`).  No SQL here: the run stages store what this builds."""
