import time, numpy as np, sys, statistics
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from threadpoolctl import threadpool_limits
from pdpboot.engine import compute_pd
n=int(sys.argv[1]); d=int(sys.argv[2]) if len(sys.argv)>2 else 1
X,y=make_friedman1(n_samples=n,n_features=10,noise=1.0,random_state=0)
est=RandomForestRegressor(100,random_state=0,n_jobs=1).fit(X,y)
g=[np.quantile(X[:,j],np.linspace(.05,.95,50)) for j in range(d)]
f=tuple(range(d))
compute_pd(est,X,f,g,response_method="predict")
ta,tb=[],[]
with threadpool_limits(1):
  for r in range(3):
    t=time.process_time(); a,_=compute_pd(est,X,f,g,response_method="predict"); ta.append(time.process_time()-t)
    if d==1:
      t=time.process_time(); b,_=compute_pd(est,X,f,g,response_method="predict",method="brute"); tb.append(time.process_time()-t)
print(n, "auto", statistics.median(ta), "brute", statistics.median(tb) if tb else None, "ratio", statistics.median([b/a for a,b in zip(ta,tb)]) if tb else None, np.abs(a-b).max() if tb else None)
