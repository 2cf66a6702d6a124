"""Reports over finished result folders: tables, the reproduction report, a cell's description,
the weakest-member penalty, experiment-tracker export, a run re-timed on another system
(``retime``: its recorded plans through the clock, never retraining) and the trade-off
studies' table (``tradeoffs``). Figures are drawn by ``figures/`` from what these read."""
