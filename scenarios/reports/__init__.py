"""Reports over finished result folders: tables, the reproduction report, a cell's description,
the weakest-member penalty, experiment-tracker export."""
