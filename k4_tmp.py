import time, numpy as np, sys, cProfile, pstats
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from pdpboot.engine import compute_pd
n=int(sys.argv[1])
X,y=make_friedman1(n_samples=n,n_features=10,noise=1.0,random_state=0)
est=RandomForestRegressor(100,random_state=0,n_jobs=1).fit(X,y)
g=[np.quantile(X[:,0],np.linspace(.05,.95,50))]
compute_pd(est,X,(0,),g,response_method="predict")
t=time.process_time(); compute_pd(est,X,(0,),g,response_method="predict"); print("auto", time.process_time()-t)
cProfile.run('compute_pd(est,X,(0,),g,response_method="predict")','/tmp/prof')
pstats.Stats('/tmp/prof').sort_stats('cumtime').print_stats(18)
