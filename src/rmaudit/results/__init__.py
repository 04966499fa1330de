"""Reading a run's stored results back and explaining them, for every front end (no UI
toolkit): which runs a DB holds (:mod:`.run_index`), a run's summary (:mod:`.summary`) with its
legend (:mod:`.legend`) and provenance (:mod:`.provenance`), JSON (:mod:`.as_json`), failures
and prompts to browse (:mod:`.browse`, :mod:`.pair_failures`), the regret study
(:mod:`.regret`), plugin panels (:mod:`.panels`) and the normaliser ablation (:mod:`.ablation`).
Kept empty of imports so that listing runs stays light."""
